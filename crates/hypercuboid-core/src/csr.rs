//! Lists of lists in two flat vectors (compressed sparse rows): list `i` is
//! `items[offsets[i] as usize..offsets[i + 1] as usize]`.

/// The lists of `lists`, in order, as `(offsets, items)`: `offsets` starts at 0 and has one
/// entry more than there are lists.
pub(crate) fn flatten<T: Copy, L: AsRef<[T]>>(
    lists: impl IntoIterator<Item = L>,
) -> (Vec<u32>, Vec<T>) {
    let lists = lists.into_iter();
    let mut offsets = Vec::with_capacity(lists.size_hint().0 + 1);
    let mut items = Vec::new();
    offsets.push(0u32);
    for list in lists {
        items.extend_from_slice(list.as_ref());
        offsets.push(items.len() as u32);
    }
    (offsets, items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_flattened_with_their_offsets() {
        let (off, items) = flatten([vec![3u32, 1], vec![], vec![7]]);
        assert_eq!(off, [0, 2, 2, 3]);
        assert_eq!(items, [3, 1, 7]);
        let (off, items) = flatten(std::iter::empty::<&[u8]>());
        assert_eq!((off, items), (vec![0], vec![]));
    }
}
