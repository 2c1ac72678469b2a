//! Arguments the benchmark and backtest binaries share.

/// What a `--family` argument names: one family by its name, or `all` of them in their order.
/// An unknown name is an error listing the names there are.
pub fn one_or_all<T: Copy>(
    name: &str,
    all: &[T],
    name_of: impl Fn(T) -> &'static str,
) -> anyhow::Result<Vec<T>> {
    if name == "all" {
        return Ok(all.to_vec());
    }
    all.iter()
        .copied()
        .find(|f| name_of(*f) == name)
        .map(|f| vec![f])
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|f| name_of(*f)).collect();
            anyhow::anyhow!(
                "unknown family {name:?}: one of {} or all",
                names.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::one_or_all;

    #[test]
    fn a_family_is_named_or_all_are_and_an_unknown_name_lists_them() {
        let all = [1u8, 2];
        let name = |f: u8| if f == 1 { "one" } else { "two" };
        assert_eq!(one_or_all("two", &all, name).unwrap(), vec![2]);
        assert_eq!(one_or_all("all", &all, name).unwrap(), vec![1, 2]);
        let e = one_or_all("three", &all, name).unwrap_err().to_string();
        assert_eq!(e, "unknown family \"three\": one of one, two or all");
    }
}
