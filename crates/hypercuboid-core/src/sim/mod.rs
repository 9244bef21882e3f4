//! The discrete-event engine that runs a schedule on a cost model.
