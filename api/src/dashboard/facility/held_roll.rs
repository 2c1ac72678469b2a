//! A held rent roll on the facility page: what it would move out, and the button that applies
//! it (`jobs::rent_roll::confirm`, as `POST /api/v1/facilities/:id/rent-roll/confirm`).

use super::*;
use jobs::rent_roll::HeldRoll;

/// The notice of a held roll, with its confirmation form for a role that may confirm it;
/// nothing when no roll is held.
pub(super) fn notice(s: &Session, id: FacilityId, held: Option<&HeldRoll>) -> Markup {
    let Some(h) = held else {
        return html! {};
    };
    html! {
        div class="error" role="alert" id="held-roll" {
            p {
                strong { "A rent roll is held. " }
                "The roll of " (h.roll_date) " would move out " (h.moving_out) " of the "
                (h.in_force) " tenants in force, more than this facility's " (h.hold_pct)
                " %. The roll in force stays until the held roll is confirmed here, or a later roll "
                "within the share replaces it."
            }
            @if s.role.allows(jobs::access::Permission::Operate) {
                form method="post" action=(format!("/app/facilities/{id}/rent-roll/confirm")) {
                    (page::csrf(s))
                    button type="submit" { "Confirm: apply the roll of " (h.roll_date) }
                }
            }
        }
    }
}

/// Applies the facility's held roll as confirmed by the signed-in user.
pub async fn confirm_roll(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let done = jobs::rent_roll::confirm(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to(&format!("/app/facilities/{id}?notice=roll")).into_response())
}
