//! Cost models (postal, pipelined postal, LogGOPS) behind one trait, and noise.
