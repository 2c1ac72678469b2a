use super::super::{rows, Baseline};
use super::*;
use crate::ecri::stay::{Outcome, StepFigures};

fn outcome(inc: f64, premium: f64, months: f64, past: u32, recent: bool, left: u32) -> Outcome {
    Outcome {
        increase_pct: inc,
        premium_pct: premium,
        tenants: 40,
        moved_out: left,
        months_since_move_in: Some(months),
        past_increases: past,
        increase_amount: inc * 1.2,
        raised_recently: recent,
        open_share: 0.0,
    }
}

fn sample_rows(prior: &StayPrior) -> Vec<Row> {
    let outcomes = [
        outcome(5.0, 0.0, 3.0, 0, false, 4),
        outcome(9.0, 25.0, 30.0, 1, false, 6),
        outcome(12.0, 35.0, 60.0, 1, true, 14),
        outcome(15.0, 10.0, 8.0, 0, false, 12),
        outcome(20.0, 45.0, 24.0, 2, true, 22),
        // A window 30 % seen.
        Outcome {
            open_share: 0.7,
            ..outcome(14.0, 20.0, 18.0, 1, false, 5)
        },
    ];
    let base = Baseline {
        rate: 0.1,
        beta: 0.4,
        reference: 20.0,
    };
    rows(&StepFigures::of(prior), &outcomes, &base)
}

fn objective<'a>(prior: &'a StayPrior, rows: &'a [Row]) -> Objective<'a> {
    Objective {
        prior,
        rows,
        centre: [0.1, -0.1, 0.0, 0.5, 0.0, 0.2],
        tau: [4.0, 4.0, 4.0, 1.0, 4.0, 4.0],
        speaks: [true; 6],
    }
}

#[test]
fn the_gradient_and_hessian_are_those_of_the_objective() {
    let prior = StayPrior::default();
    let rows = sample_rows(&prior);
    let f = objective(&prior, &rows);
    let theta = [0.3, -0.2, 0.25, 0.8, 0.4, 0.3];
    let (g, h) = f.derivatives(theta);
    let e = 1e-5;
    let shifted = |k: usize, d: f64| {
        let mut t = theta;
        t[k] += d;
        t
    };
    for i in 0..6 {
        let numeric = (f.value(shifted(i, e)) - f.value(shifted(i, -e))) / (2.0 * e);
        assert!(
            (g[i] - numeric).abs() < 1e-4 * (1.0 + numeric.abs()),
            "g[{i}] {} {numeric}",
            g[i]
        );
        let (gp, _) = f.derivatives(shifted(i, e));
        let (gm, _) = f.derivatives(shifted(i, -e));
        for j in 0..6 {
            let numeric = (gp[j] - gm[j]) / (2.0 * e);
            assert!(
                (h[i][j] - numeric).abs() < 1e-4 * (1.0 + numeric.abs()),
                "h[{i}][{j}] {} {numeric}",
                h[i][j]
            );
        }
    }
}

#[test]
fn newton_steps_reach_the_maximum_and_never_lower_the_objective() {
    let prior = StayPrior::default();
    let rows = sample_rows(&prior);
    let f = objective(&prior, &rows);
    let start = f.centre;
    let theta = refine(&f, start);
    assert!(f.value(theta) > f.value(start));
    // At the answer the gradient vanishes.
    let (g, _) = f.derivatives(theta);
    assert!(g.iter().all(|x| x.abs() < 1e-6), "{g:?}");
    // From the answer it does not move.
    let again = refine(&f, theta);
    for k in 0..6 {
        assert!((again[k] - theta[k]).abs() < 1e-6, "{again:?} {theta:?}");
    }
    // A coordinate nothing speaks of stays where it was.
    let held = Objective {
        speaks: [true, true, true, false, true, true],
        ..objective(&prior, &rows)
    };
    assert_eq!(refine(&held, start)[3], start[3]);
}

#[test]
fn where_the_objective_is_not_concave_the_coordinate_answer_stands() {
    let prior = StayPrior::default();
    let rows = sample_rows(&prior);
    // Priors that push away from their centres instead of holding to them: the objective is
    // convex along every axis, the Hessian not negative definite.
    let f = Objective {
        tau: [-1000.0; 6],
        ..objective(&prior, &rows)
    };
    let start = [0.3, -0.2, 0.25, 0.8, 0.4, 0.3];
    let (_, h) = f.derivatives(start);
    let minus_h: Vec<Vec<f64>> = h.iter().map(|r| r.iter().map(|x| -x).collect()).collect();
    assert!(cholesky(&minus_h).is_none(), "{h:?}");
    assert_eq!(refine(&f, start), start);
}

#[test]
fn cholesky_solves_a_positive_definite_system() {
    let m = vec![
        vec![4.0, 2.0, 0.6],
        vec![2.0, 5.0, 1.0],
        vec![0.6, 1.0, 3.0],
    ];
    let l = cholesky(&m).expect("positive definite");
    let x = solve(&l, &[1.0, 2.0, 3.0]);
    for i in 0..3 {
        let mx: f64 = (0..3).map(|j| m[i][j] * x[j]).sum();
        assert!((mx - [1.0, 2.0, 3.0][i]).abs() < 1e-12, "{x:?}");
    }
    assert!(cholesky(&[vec![1.0, 2.0], vec![2.0, 1.0]]).is_none());
}
