//! [`error_from!`]: the `From` conversions of the subsystems' error enums, one line each.

/// Writes `impl From<FROM> for ENUM` for every `FROM => CONVERT` pair, where `CONVERT` is a
/// function from `FROM` to the enum: a tuple variant (`NetworkError::Memory`) or a closure
/// (`|_| NetworkError::Interrupted`, `|e| ScheduleError::Spec(Box::new(e))`).
macro_rules! error_from {
    ($enum:ty { $($from:ty => $convert:expr),* $(,)? }) => {
        $(
            impl From<$from> for $enum {
                fn from(e: $from) -> Self {
                    let convert: fn($from) -> Self = $convert;
                    convert(e)
                }
            }
        )*
    };
}
pub(crate) use error_from;
