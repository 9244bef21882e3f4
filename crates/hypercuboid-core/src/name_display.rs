//! [`display_by_name!`]: `Display` as the value's `name()`, one line for every type shown so.

/// Writes `impl Display` for every type whose text is its `name()` (an algorithm's spec, a
/// dtype's NumPy name): `name()` may return a `&str` or a `String`.
macro_rules! display_by_name {
    ($($t:ty),+ $(,)?) => {
        $(
            impl std::fmt::Display for $t {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str(&self.name())
                }
            }
        )+
    };
}
pub(crate) use display_by_name;
