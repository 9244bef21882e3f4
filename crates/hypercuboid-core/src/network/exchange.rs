//! An exchange's options given apart from its spec (the front ends' `dims`, message size and
//! order), checked against the exchange they apply to.

use super::error::param;
use super::{ExchangeSpec, NetworkError};

impl ExchangeSpec {
    /// The exchange with `dims` (the `nn` torus; refused for `a2a`), `bytes` (per message,
    /// where given) and `interleave` (the `a2a` order) applied.
    pub fn with_options(
        mut self,
        dims: Option<[u32; 3]>,
        bytes: Option<u64>,
        interleave: bool,
    ) -> Result<ExchangeSpec, NetworkError> {
        match &mut self {
            ExchangeSpec::AllToAll {
                bytes: b,
                interleave: il,
            } => {
                if let Some(d) = dims {
                    return Err(param(
                        "torus dimensions",
                        format!("{}x{}x{}", d[0], d[1], d[2]),
                        "they apply to the nn exchange, not a2a",
                    ));
                }
                if let Some(x) = bytes {
                    *b = x;
                }
                *il = interleave;
            }
            ExchangeSpec::NearestNeighbor { dims: d, bytes: b } => {
                if dims.is_some() {
                    *d = dims;
                }
                if let Some(x) = bytes {
                    *b = x;
                }
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_apply_to_their_exchange() {
        let a2a = ExchangeSpec::parse("a2a").unwrap();
        let x = a2a.clone().with_options(None, Some(64), false).unwrap();
        assert_eq!(
            x,
            ExchangeSpec::AllToAll {
                bytes: 64,
                interleave: false
            }
        );
        let e = a2a.with_options(Some([2, 3, 4]), None, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid torus dimensions 2x3x4: they apply to the nn exchange, not a2a"
        );
        let nn = ExchangeSpec::parse("nn").unwrap();
        let x = nn.with_options(Some([2, 3, 4]), Some(8), true).unwrap();
        assert_eq!(
            x,
            ExchangeSpec::NearestNeighbor {
                dims: Some([2, 3, 4]),
                bytes: 8
            }
        );
    }
}
