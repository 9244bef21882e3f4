//! Closed-form costs of the alltoall algorithms in the postal model, in picoseconds.
//!
//! The model and its rules are those of the allreduce closed forms
//! ([`crate::collectives::allreduce::cost`]): a message of `b` bytes issued at `t` arrives at
//! `t + α + β·b` (`β·b` rounded once per message); a rank's sends are serialised on its port
//! until each arrives; a receive completes when its message has arrived; copies take no time.
//! An alltoall reduces nothing, so `γ` and `δ` do not enter; `alpha_p` must be 0 (the
//! pipelined model overlaps sends: simulate it).
//!
//! Every algorithm here is symmetric: at each point of its program every rank sends a message
//! of the same size, and the message it waits for was sent by its peer at the same point of the
//! peer's program. Its time is therefore the sum over one rank's sends of `α + β·b`:
//! - `linear`, `linear_shifted`, `pairwise`, `linear_sync`: `(N − 1)(α + βm)` for blocks of `m`
//!   bytes. The waits between blocks or steps add nothing: the receives of a block complete
//!   when the rank's own sends of the block do.
//! - `bruck`, `k_bruck:k=K`: `Σ_{d, v} (α + β·|B(d, v)|·m)` over the digits `d` (`K^d < N`) and
//!   digit values `v` (`v·K^d < N`), `|B(d, v)|` the number of block indices below `N` whose
//!   base-`K` digit `d` is `v`; for `N` a power of two and `K = 2`,
//!   `log2 N · (α + β·(N/2)·m)`.
//!
//! The simulator equals these to the picosecond for every algorithm and every N up to 64
//! (`tests/integration/alltoall_verified.rs`).

use super::{bruck, Algorithm, Alltoall, AlltoallSpec};
use crate::collectives::registry::Cost;
use crate::model::PostalModel;
use crate::schedule::ScheduleError;
use crate::units::{per_byte, Time};

/// The closed form of the algorithms whose every rank sends its N - 1 blocks in N - 1 messages
/// (`linear`, `linear_shifted`, `linear_sync`, `pairwise`).
pub(crate) const DIRECT: &str = "(N - 1)(α + βm) for blocks of m bytes; exact";

/// [`DIRECT`] as an entry's cost, computed by [`alltoall`].
pub(crate) const DIRECT_COST: Cost<Alltoall> = Cost {
    formula: DIRECT,
    time: alltoall,
};

/// The time of `alg` on `spec` in the postal model `m`.
pub fn alltoall(
    alg: &Algorithm,
    spec: &AlltoallSpec,
    m: &PostalModel,
) -> Result<Time, ScheduleError> {
    spec.validate()?;
    if let Err(e) = m.validate() {
        return Err(ScheduleError::BadParameter {
            name: "model".into(),
            value: format!("{m:?}"),
            reason: e.to_string(),
        });
    }
    if m.alpha_p != 0 {
        return Err(ScheduleError::BadParameter {
            name: "alpha_p".into(),
            value: m.alpha_p.to_string(),
            reason: "the closed forms are the postal model's (alpha_p = 0); simulate the \
                     pipelined model"
                .into(),
        });
    }
    let n = spec.nranks;
    if spec.count == 0 || n == 1 {
        return Ok(0);
    }
    let block = spec.count * spec.dtype.size() as u64;
    let message = |blocks: u64| m.alpha_r as u128 + per_byte(blocks * block, m.beta) as u128;
    let total: u128 = match *alg {
        Algorithm::Linear
        | Algorithm::LinearShifted { .. }
        | Algorithm::Pairwise
        | Algorithm::LinearSync { .. } => (n as u128 - 1) * message(1),
        Algorithm::Bruck => bruck_messages(n, 2).map(message).sum(),
        Algorithm::KBruck { k } => bruck_messages(n, k).map(message).sum(),
        Algorithm::Scheduled { .. } => {
            return Err(ScheduleError::BadParameter {
                name: "alltoall algorithm".into(),
                value: alg.name().into_owned(),
                reason: "scheduled has no closed form (its time depends on the topology's \
                         links): simulate it"
                    .into(),
            })
        }
    };
    Time::try_from(total).map_err(|_| ScheduleError::BadParameter {
        name: "cost".into(),
        value: format!("{total} ps"),
        reason: "exceeds the 2^64 - 1 ps (213 days) that simulated time can hold".into(),
    })
}

/// The blocks each message of a radix-`k` Bruck on `n` ranks carries, in program order.
fn bruck_messages(n: u32, k: u32) -> impl Iterator<Item = u64> {
    let digits = std::iter::successors(Some(1u64), move |&d| {
        d.checked_mul(k as u64).filter(|&x| x < n as u64)
    });
    digits.flat_map(move |dist| {
        (1..k)
            .take_while(move |&v| (v as u64) * dist < n as u64)
            .map(move |v| bruck::runs(n, k, dist, v).map(|(_, len)| len as u64).sum())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bruck_messages_carry_the_blocks_with_the_digit() {
        assert_eq!(bruck_messages(8, 2).collect::<Vec<_>>(), [4, 4, 4]);
        assert_eq!(bruck_messages(6, 2).collect::<Vec<_>>(), [3, 2, 2]);
        assert_eq!(bruck_messages(9, 3).collect::<Vec<_>>(), [3, 3, 3, 3]);
        assert_eq!(bruck_messages(5, 4).collect::<Vec<_>>(), [1, 1, 1, 1]);
        assert_eq!(bruck_messages(2, 200).collect::<Vec<_>>(), [1]);
    }
}
