//! Placement and scheduling policies for Lamina.
