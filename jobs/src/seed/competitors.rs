//! The demo's competitor rates: five competitors priced around the unit mix's street rates,
//! by class where the facility lets both.

use rand::{rngs::StdRng, Rng};
use serde_json::{json, Value};

const COMPETITORS: [&str; 5] = [
    "Public Storage",
    "Extra Space",
    "CubeSmart",
    "Life Storage",
    "Local Lockers",
];
/// (size, drive-up base rate, climate base rate) the competitors price, as the unit mix's
/// street rates of the two classes; every competitor offers drive-up, the first
/// [`CLIMATE_COMPETITORS`] climate too, so each class of these sizes has a band of its own
/// (docs/pricing.md, "Tiers are markets of their own").
const COMPETITOR_SIZES: [(&str, f64, f64); 3] = [
    ("5x10", 69.0, 79.0),
    ("10x10", 115.0, 129.0),
    ("10x20", 189.0, 215.0),
];
const CLIMATE_COMPETITORS: usize = 3;

/// One day's competitor rates: per competitor and size one draw of its position (and of a
/// promotion), for each class it lets.
pub(super) fn rates(rng: &mut StdRng) -> Vec<Value> {
    COMPETITORS
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            COMPETITOR_SIZES
                .map(|(size, drive_up, climate)| {
                    // One draw of the competitor's position for both its classes of the size.
                    let at = rng.gen_range(0.85..1.2_f64);
                    let promo = if rng.gen_bool(0.3) {
                        Value::from("First month $1")
                    } else {
                        Value::Null
                    };
                    let url = format!("https://example.com/{}", c.to_lowercase().replace(' ', "-"));
                    let tiers = if i < CLIMATE_COMPETITORS {
                        &[("drive-up", drive_up), ("climate", climate)][..]
                    } else {
                        &[("drive-up", drive_up)][..]
                    };
                    tiers
                        .iter()
                        .map(|(tier, base)| {
                            json!({
                                "competitor": c, "size": size, "tier": tier,
                                "rate": (base * at).round(), "promo": promo, "source_url": url,
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .into_iter()
                .flatten()
        })
        .collect()
}
