//! The judges of a process, with their verdict caches: what every adapter
//! calls (the launch session and the server keep one for their lifetime;
//! a shim or hook process makes one with the shared disk cache).

use crate::cache::{DiskCache, Key, MemoryCache, VerdictStore};
use crate::{Error, Input, Judge, JudgeConfig, Ruling};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// One judged question.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub judge: &'a JudgeConfig,
    pub input: Input<'a>,
    /// Reuse a verdict for identical actions this long (`None`: never).
    pub cache_ttl: Option<Duration>,
}

/// Reads an API key by the name of its variable.
type KeySource = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The judges in use and their caches.
pub struct Bench {
    memory: MemoryCache,
    /// Where verdicts outlive the process (a directory, a database).
    store: Option<Box<dyn VerdictStore>>,
    /// Built judges by name, while their definition is unchanged (their
    /// connections are reused).
    judges: Mutex<HashMap<String, Arc<Judge>>>,
    /// Reads an API key by variable name (the environment, normally).
    key_of: KeySource,
}

impl Bench {
    /// Verdicts cached in memory only (a long-lived process).
    pub fn in_memory() -> Bench {
        Bench {
            memory: MemoryCache::default(),
            store: None,
            judges: Mutex::default(),
            key_of: Box::new(|var| std::env::var(var).ok()),
        }
    }

    /// Verdicts also shared with other processes through `dir`.
    pub fn with_disk(dir: &Path) -> Bench {
        Bench::with_store(DiskCache::new(dir))
    }

    /// Verdicts also kept in `store` (the server's database), behind the
    /// memory.
    pub fn with_store(store: impl VerdictStore + 'static) -> Bench {
        Bench {
            store: Some(Box::new(store)),
            ..Bench::in_memory()
        }
    }

    /// Keys read by `key_of` instead of from the environment (tests, or
    /// a session that took the key out of the agent's environment).
    pub fn keys(
        mut self,
        key_of: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Bench {
        self.key_of = Box::new(key_of);
        self
    }

    /// The verdict: from the cache when an identical action was judged
    /// within the TTL, else from the model (and then cached).
    pub fn decide(&self, call: &Call<'_>) -> Result<Ruling, Error> {
        let started = Instant::now();
        let ttl = call.cache_ttl.filter(|t| !t.is_zero());
        let key = ttl.map(|_| Key::of(call.judge, &call.input));
        if let Some(key) = &key {
            let hit = self
                .memory
                .get(key, started)
                .or_else(|| self.store.as_ref()?.get(key, SystemTime::now()));
            if let Some(verdict) = hit {
                return Ok(Ruling {
                    verdict,
                    usage: crate::Usage::default(),
                    model: call.judge.model.clone(),
                    latency: started.elapsed(),
                    cached: true,
                });
            }
        }
        let ruling = self.judge(call.judge).decide(&call.input)?;
        if let (Some(key), Some(ttl)) = (key, ttl) {
            self.memory
                .put(key, ruling.verdict.clone(), ttl, Instant::now());
            if let Some(store) = &self.store {
                store.put(&key, &ruling.verdict, ttl, SystemTime::now());
            }
        }
        Ok(ruling)
    }

    /// The request a call would send (for `aileron judge try`).
    pub fn exchange(&self, call: &Call<'_>) -> crate::Exchange {
        self.judge(call.judge).exchange(&call.input)
    }

    fn judge(&self, cfg: &JudgeConfig) -> Arc<Judge> {
        let mut judges = self.judges.lock().unwrap_or_else(|p| p.into_inner());
        let mut want = cfg.clone();
        want.timeout = want.timeout.min(crate::CEILING);
        if let Some(j) = judges.get(&cfg.name).filter(|j| *j.config() == want) {
            return j.clone();
        }
        let key = cfg.api_key_env.as_deref().and_then(|v| (self.key_of)(v));
        let judge = Arc::new(Judge::new(cfg.clone(), key));
        judges.insert(cfg.name.clone(), judge.clone());
        judge
    }
}
