//! GOAL text import and export (LogGOPSim txt2bin grammar) and the lossless hypercuboid text form.
