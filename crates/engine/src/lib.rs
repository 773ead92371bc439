//! Lamina's deterministic discrete-event replay engine.
