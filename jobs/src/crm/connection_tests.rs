//! How many connection tests run at once. A test waits on an address a customer chose, so a
//! client asking for many in parallel must not hold the process's sockets and tasks: each
//! process runs at most `CRM_TESTS_PER_PROCESS` at once and at most `CRM_TESTS_PER_COMPANY` of
//! one company; a test beyond either is refused at once (429), not queued.

use crate::config::CrmSettings;
use crate::error::Error;
use domain::ids::CompanyId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The running tests of one process (cheap to clone: the count is shared).
#[derive(Clone)]
pub struct ConnectionTests {
    running: Arc<Mutex<Running>>,
    per_process: usize,
    per_company: usize,
    retry_after_secs: u64,
}

#[derive(Default)]
struct Running {
    total: usize,
    by_company: HashMap<CompanyId, usize>,
}

/// One running test; dropping it ends it.
pub struct Permit {
    running: Arc<Mutex<Running>>,
    company: CompanyId,
}

impl ConnectionTests {
    pub fn new(settings: &CrmSettings) -> Self {
        Self {
            running: Arc::default(),
            per_process: settings.tests_per_process,
            per_company: settings.tests_per_company,
            retry_after_secs: settings.test_timeout.as_secs().max(1),
        }
    }

    /// Starts a test of `company`, or refuses it when either limit is reached.
    pub fn start(&self, company: CompanyId) -> Result<Permit, Error> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let of_company = running.by_company.get(&company).copied().unwrap_or(0);
        let message = if of_company >= self.per_company {
            format!(
                "{} connection tests of this account are already running; retry when one ends",
                self.per_company
            )
        } else if running.total >= self.per_process {
            "too many connection tests are running; retry shortly".to_owned()
        } else {
            running.total += 1;
            *running.by_company.entry(company).or_default() += 1;
            return Ok(Permit {
                running: Arc::clone(&self.running),
                company,
            });
        };
        Err(Error::Busy {
            message,
            retry_after_secs: self.retry_after_secs,
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.total = running.total.saturating_sub(1);
        if let Some(n) = running.by_company.get_mut(&self.company) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.by_company.remove(&self.company);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tests(per_process: usize, per_company: usize) -> ConnectionTests {
        ConnectionTests::new(&CrmSettings {
            timeout: Duration::from_secs(30),
            max_answer_bytes: 1024,
            test_timeout: Duration::from_secs(15),
            tests_per_process: per_process,
            tests_per_company: per_company,
        })
    }

    #[test]
    fn each_limit_refuses_beyond_it_and_a_finished_test_frees_its_place() {
        let limits = tests(3, 2);
        let (a, b) = (
            CompanyId::from(uuid::Uuid::new_v4()),
            CompanyId::from(uuid::Uuid::new_v4()),
        );
        let a1 = limits.start(a).unwrap();
        let _a2 = limits.start(a).unwrap();
        let Err(Error::Busy {
            message,
            retry_after_secs,
        }) = limits.start(a)
        else {
            panic!("a third test of one company is refused");
        };
        assert!(
            message.contains("2 connection tests of this account"),
            "{message}"
        );
        assert_eq!(retry_after_secs, 15);
        let _b1 = limits.start(b).unwrap();
        assert!(
            matches!(limits.start(b), Err(Error::Busy { ref message, .. }) if message.starts_with("too many")),
            "the process is full"
        );
        drop(a1);
        let _b2 = limits.start(b).unwrap();
        assert!(limits.start(a).is_err(), "full again");
    }
}
