//! Network simulation: routing (MIN / Valiant / UGAL) with virtual channels, traffic patterns, packet-level engine.
