//! The `lamina` command.
fn main() {}
