//! Flash translation layers for Lamina.
