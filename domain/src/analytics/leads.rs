//! The lead funnel: per-channel counts and shares over a period, overall lead-to-move-in
//! conversion, dead channels. Per-channel conversion is not measured (a move-in does not say
//! which lead it came from), so it is labelled as such and never estimated.
//!
//! - share_pct = channel leads / all leads x 100 (null when there are no leads);
//! - overall conversion_pct = conversion move-ins / leads x 100, where the conversion move-ins
//!   are those of the facility-days that sent leads (a facility or a day without lead data
//!   would count move-ins against no leads: one facility with 10 leads and 2 move-ins and one
//!   with no lead data and 8 move-ins convert 20 %, not 100 %); null without leads. Walk-in
//!   move-ins without a recorded lead count too, so it can exceed 100;
//! - a channel is dead when it had leads in the preceding period of the same length and none
//!   in this one.

use crate::values::round2;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq)]
pub struct ChannelLeads {
    pub channel: String,
    pub leads: u64,
    pub previous_period_leads: u64,
}

/// The label every channel carries in place of a conversion figure.
pub const NOT_MEASURED: &str = "not_measured";

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = LeadChannel)]
pub struct Channel {
    /// Lead channel (lower-case).
    pub channel: String,
    /// Leads in the period.
    pub leads: u64,
    /// The channel's share of all leads, percent.
    pub share_pct: Option<f64>,
    /// Leads in the period before.
    pub previous_period_leads: u64,
    /// True when the channel had leads before and none now.
    pub dead: bool,
    /// Per-channel conversion is not measured; this says so.
    pub conversion: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = LeadFunnel)]
pub struct Funnel {
    /// Leads in the period.
    pub total_leads: u64,
    /// Move-ins in the period, of every facility and day in scope.
    pub move_ins: u64,
    /// Move-ins of the facility-days that sent leads: the conversion's numerator.
    pub conversion_move_ins: u64,
    /// Conversion move-ins per lead, percent.
    pub conversion_pct: Option<f64>,
    /// Per channel, most leads first.
    pub channels: Vec<Channel>,
    /// Channels flagged dead.
    pub dead_channels: Vec<String>,
}

/// Channels come back ordered by leads (most first), then name.
/// `move_ins` counts every facility-day of the period, `conversion_move_ins` only those that
/// sent leads.
pub fn funnel(channels: &[ChannelLeads], move_ins: u64, conversion_move_ins: u64) -> Funnel {
    let total: u64 = channels.iter().map(|c| c.leads).sum();
    let mut out: Vec<Channel> = channels
        .iter()
        .map(|c| Channel {
            channel: c.channel.clone(),
            leads: c.leads,
            share_pct: (total > 0).then(|| round2(c.leads as f64 / total as f64 * 100.0)),
            previous_period_leads: c.previous_period_leads,
            dead: c.leads == 0 && c.previous_period_leads > 0,
            conversion: NOT_MEASURED,
        })
        .collect();
    out.sort_by(|a, b| {
        b.leads
            .cmp(&a.leads)
            .then_with(|| a.channel.cmp(&b.channel))
    });
    let dead_channels = out
        .iter()
        .filter(|c| c.dead)
        .map(|c| c.channel.clone())
        .collect();
    Funnel {
        total_leads: total,
        move_ins,
        conversion_move_ins,
        conversion_pct: (total > 0)
            .then(|| round2(conversion_move_ins as f64 / total as f64 * 100.0)),
        channels: out,
        dead_channels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ch(name: &str, leads: u64, prev: u64) -> ChannelLeads {
        ChannelLeads {
            channel: name.to_owned(),
            leads,
            previous_period_leads: prev,
        }
    }

    #[test]
    fn by_hand() {
        // web 30, phone 10, referral 0 (5 before): 40 leads, shares 75 / 25 / 0,
        // 12 move-ins -> 30 % conversion; referral is dead.
        let f = funnel(
            &[ch("phone", 10, 8), ch("referral", 0, 5), ch("web", 30, 20)],
            12,
            12,
        );
        assert_eq!(f.total_leads, 40);
        assert_eq!(f.conversion_pct, Some(30.0));
        let got: Vec<(&str, u64, Option<f64>, bool)> = f
            .channels
            .iter()
            .map(|c| (c.channel.as_str(), c.leads, c.share_pct, c.dead))
            .collect();
        assert_eq!(
            got,
            vec![
                ("web", 30, Some(75.0), false),
                ("phone", 10, Some(25.0), false),
                ("referral", 0, Some(0.0), true)
            ]
        );
        assert_eq!(f.dead_channels, vec!["referral"]);
        assert!(f.channels.iter().all(|c| c.conversion == NOT_MEASURED));
    }

    #[test]
    fn only_move_ins_of_days_with_leads_convert() {
        // One facility: 10 leads, 2 move-ins; another sent no leads and had 8 move-ins.
        let f = funnel(&[ch("web", 10, 0)], 10, 2);
        assert_eq!((f.move_ins, f.conversion_move_ins), (10, 2));
        assert_eq!(f.conversion_pct, Some(20.0));
    }

    #[test]
    fn no_leads_no_ratio() {
        let f = funnel(&[], 3, 0);
        assert_eq!(f.conversion_pct, None);
        assert!(f.channels.is_empty());
    }

    proptest! {
        #[test]
        fn shares_sum_to_100(counts in proptest::collection::vec(0u64..10_000, 1..12)) {
            let chans: Vec<ChannelLeads> = counts.iter().enumerate().map(|(i, c)| ch(&format!("c{i}"), *c, 0)).collect();
            let f = funnel(&chans, 0, 0);
            let sum: f64 = f.channels.iter().filter_map(|c| c.share_pct).sum();
            if f.total_leads > 0 {
                prop_assert!((sum - 100.0).abs() < 0.01 * chans.len() as f64);
            } else {
                prop_assert_eq!(sum, 0.0);
            }
        }
    }
}
