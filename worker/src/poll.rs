//! A poll strategy that wakes the worker every `period`. apalis 1.0's `IntervalStrategy` creates
//! its next delay without polling it, so when a fetch completes at once nothing wakes the worker
//! until its heartbeat (seen stalling in 4 of 10 runs); this one re-arms its timer every tick.

use apalis::prelude::{PollSnapshot, PollStrategy};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pub struct TickEvery {
    period: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl TickEvery {
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            sleep: Box::pin(tokio::time::sleep(period)),
        }
    }
}

impl PollStrategy for TickEvery {
    fn poll_drive(&mut self, cx: &mut Context<'_>, _: &PollSnapshot) -> Poll<Option<()>> {
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.sleep
                .as_mut()
                .reset(tokio::time::Instant::now() + self.period);
            // Register the waker for the next tick.
            let _ = self.sleep.as_mut().poll(cx);
            return Poll::Ready(Some(()));
        }
        Poll::Pending
    }
}
