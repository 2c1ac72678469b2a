//! A batch's lines as a person works through them: a summary per size (what the batch asks of
//! each size and what it is expected to bring), a GET form of filters (size, what became of
//! the line), and the matching lines 50 a page. A draft's page is a form of its own lines
//! only: saving it changes no line of another page.

use super::queue::{choice, PER_PAGE};
use crate::dashboard::chart::Table;
use crate::dashboard::figures::{cells, Figures};
use jobs::ecri::sizes::size_order;
use jobs::ecri_batches::Line;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The field of a draft's form that names the lines it shows (`3,4,5`), so a save touches
/// only those.
pub const SHOWN: &str = "shown";

/// The filters of a batch's lines, as the page's query string carries them.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct LineFilters {
    pub size: Option<String>,
    /// `kept`, `edited` or `left_out`.
    pub status: Option<String>,
    /// 1-based (text, so a bad page reads as the first rather than refusing the page).
    pub page: Option<String>,
}

const STATUSES: [(&str, &str); 3] = [
    ("kept", "kept as suggested"),
    ("edited", "edited"),
    ("left_out", "left out"),
];

fn set(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// What became of a line: `kept`, `edited` or `left_out`.
pub fn status_of(l: &Line) -> &'static str {
    if l.excluded {
        "left_out"
    } else if l.edited {
        "edited"
    } else {
        "kept"
    }
}

impl LineFilters {
    pub fn keeps(&self, l: &Line) -> bool {
        set(&self.size).is_none_or(|s| l.size == s)
            && set(&self.status).is_none_or(|s| status_of(l) == s)
    }

    /// The page asked for, at least 1.
    pub fn page(&self) -> usize {
        set(&self.page)
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1)
    }

    /// The filters as a query string (without the page).
    pub fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [("size", &self.size), ("status", &self.status)] {
            if let Some(v) = set(v) {
                q.append_pair(k, v);
            }
        }
        q.finish()
    }

    /// The address of page `page` under the same filters.
    pub fn page_href(&self, page: usize) -> String {
        let q = self.query();
        let sep = if q.is_empty() { "" } else { "&" };
        format!("?{q}{sep}page={page}#lines-h")
    }
}

/// The lines that pass the filters, in the batch's order (its line numbers).
pub fn filtered<'a>(lines: &'a [Line], f: &LineFilters) -> Vec<&'a Line> {
    lines.iter().filter(|l| f.keeps(l)).collect()
}

/// One page of `lines` and where it stands: (the page's lines, page, pages).
pub fn paged<'a>(lines: &[&'a Line], f: &LineFilters) -> (Vec<&'a Line>, usize, usize) {
    let pages = lines.len().div_ceil(PER_PAGE).max(1);
    let page = f.page().min(pages);
    let shown = lines
        .iter()
        .skip((page - 1) * PER_PAGE)
        .take(PER_PAGE)
        .copied()
        .collect();
    (shown, page, pages)
}

/// The pager above and below the lines.
pub fn pager(total: usize, page: usize, pages: usize, f: &LineFilters) -> Markup {
    let from = (page - 1) * PER_PAGE + usize::from(total > 0);
    let to = (page * PER_PAGE).min(total);
    html! {
        nav class="pager" aria-label="Pages of the batch's lines" {
            span class="lines-position" { "Lines " (from) " to " (to) " of " (total) " · page " (page) " of " (pages) }
            @if page > 1 { " " a class="lines-prev" href=(f.page_href(page - 1)) { "Previous" } }
            @if page < pages { " " a class="lines-next" href=(f.page_href(page + 1)) { "Next" } }
        }
    }
}

/// The GET form of the filters, its sizes drawn from the batch's lines.
pub fn filter_form(lines: &[Line], f: &LineFilters) -> Markup {
    let mut sizes: Vec<&str> = lines.iter().map(|l| l.size.as_str()).collect();
    sizes.sort_by(|a, b| size_order(a, b));
    sizes.dedup();
    let sizes: Vec<(String, String)> = sizes
        .iter()
        .map(|s| ((*s).to_owned(), (*s).to_owned()))
        .collect();
    let statuses: Vec<(String, String)> = STATUSES
        .iter()
        .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
        .collect();
    html! {
        form class="card filters" method="get" id="lines-filters" action="#lines-h" {
            (choice(("size", "Size", "every size"), &sizes, set(&f.size)))
            (choice(("status", "Line", "every line"), &statuses, set(&f.status)))
            div class="actions" {
                button type="submit" id="apply-line-filters" { "Show" }
                a href="?#lines-h" { "Clear" }
            }
        }
    }
}

/// The line numbers a draft's form showed, when it says (`None`: every line, as a form that
/// does not say is read).
pub fn shown(values: &BTreeMap<String, String>) -> Option<Vec<i32>> {
    values.get(SHOWN).map(|v| {
        v.split(',')
            .filter_map(|n| n.trim().parse::<i32>().ok())
            .collect()
    })
}

/// Per size, what the batch asks and brings: its lines and tenants, those kept and left out,
/// the rent roll of its kept tenants now and after, the uplift, the average increase and the
/// expected gain. Sizes in their natural order (5x5, 5x10, 10x10).
pub fn sizes_table(fig: &Figures, lines: &[Line]) -> Table {
    #[derive(Default)]
    struct Size {
        lines: u32,
        left_out: u32,
        tenants: i64,
        now: f64,
        after: f64,
        gain: f64,
    }
    let mut by_size: BTreeMap<&str, Size> = BTreeMap::new();
    for l in lines {
        let s = by_size.entry(l.size.as_str()).or_default();
        s.lines += 1;
        if l.excluded {
            s.left_out += 1;
            continue;
        }
        let n = f64::from(l.tenant_count);
        s.tenants += i64::from(l.tenant_count);
        s.now += l.current_rent * n;
        s.after += l.new_rent * n;
        s.gain += l.expected_gain;
    }
    let mut sizes: Vec<(&str, Size)> = by_size.into_iter().collect();
    sizes.sort_by(|a, b| size_order(a.0, b.0));
    let mut t = Table::new(
        "ecri-batch-sizes",
        "The batch per size (kept lines; left-out lines keep their rent)",
        &[
            "Size",
            "Lines",
            "Left out",
            "Tenants raised",
            "Rent now (per month)",
            "New rent (per month)",
            "Monthly uplift",
            "Average increase (%)",
            "Expected gain",
        ],
    );
    for (size, s) in &sizes {
        let avg = (s.now > 0.0).then(|| (s.after / s.now - 1.0) * 100.0);
        t.row(cells![
            (*size).to_owned(),
            fig.count(f64::from(s.lines)),
            fig.count(f64::from(s.left_out)),
            fig.count(s.tenants as f64),
            fig.amount(s.now),
            fig.amount(s.after),
            fig.amount(s.after - s.now),
            fig.pct(avg),
            fig.amount(s.gain),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::values::Currency;

    fn line(n: i32, size: &str, rent: f64, new: f64, excluded: bool, edited: bool) -> Line {
        Line {
            line: n,
            tenant_id: Some(format!("T{n}")),
            customer_id: None,
            size: size.to_owned(),
            months_since_last_increase: Some(14.0),
            tenant_count: 1,
            current_rent: rent,
            suggested_rent: new,
            new_rent: new,
            stay_probability: 0.9,
            expected_gain: (new - rent) * 10.0,
            edited,
            excluded,
            reasons: serde_json::Value::Null,
            dropped: None,
        }
    }

    #[test]
    fn filters_page_and_sum_per_size_in_natural_order() {
        let mut lines: Vec<Line> = (1..=120)
            .map(|n| {
                line(
                    n,
                    if n % 2 == 0 { "10x10" } else { "5x5" },
                    100.0,
                    108.0,
                    false,
                    false,
                )
            })
            .collect();
        lines[0].excluded = true; // line 1, a 5x5
        lines[3].edited = true; // line 4, a 10x10
        lines[3].new_rent = 104.0;
        lines[3].expected_gain = 40.0;
        let all = LineFilters::default();
        let matching = filtered(&lines, &all);
        let (page, at, pages) = paged(
            &matching,
            &LineFilters {
                page: Some("3".into()),
                ..all.clone()
            },
        );
        assert_eq!((at, pages, page.len()), (3, 3, 20));
        assert_eq!(page[0].line, 101);
        // A page past the end reads as the last; a bad one as the first.
        let (_, at, _) = paged(
            &matching,
            &LineFilters {
                page: Some("9".into()),
                ..all.clone()
            },
        );
        assert_eq!(at, 3);
        let (_, at, _) = paged(
            &matching,
            &LineFilters {
                page: Some("x".into()),
                ..all.clone()
            },
        );
        assert_eq!(at, 1);
        let f = LineFilters {
            size: Some("10x10".into()),
            status: Some("edited".into()),
            page: None,
        };
        let only: Vec<i32> = filtered(&lines, &f).iter().map(|l| l.line).collect();
        assert_eq!(only, vec![4]);
        assert_eq!(f.page_href(2), "?size=10x10&status=edited&page=2#lines-h");
        let left: Vec<i32> = filtered(
            &lines,
            &LineFilters {
                status: Some("left_out".into()),
                ..all.clone()
            },
        )
        .iter()
        .map(|l| l.line)
        .collect();
        assert_eq!(left, vec![1]);

        let t = sizes_table(&Figures::new(Currency::USD), &lines);
        let plain =
            |r: usize| -> Vec<String> { t.rows[r].iter().map(|c| c.plain.clone()).collect() };
        // 5x5 first: 60 lines, 1 left out, 59 raised by $8 each; 10x10: 60 raised, one by $4.
        assert_eq!(
            plain(0),
            ["5x5", "60", "1", "59", "5900", "6372", "472", "8.0", "4720"]
        );
        assert_eq!(
            plain(1),
            ["10x10", "60", "0", "60", "6000", "6476", "476", "7.9", "4760"]
        );
        assert_eq!(t.rows.len(), 2);
    }

    #[test]
    fn a_form_says_which_lines_it_showed() {
        let mut v = BTreeMap::new();
        assert_eq!(shown(&v), None);
        v.insert(SHOWN.to_owned(), "3, 4,x,51".to_owned());
        assert_eq!(shown(&v), Some(vec![3, 4, 51]));
    }
}
