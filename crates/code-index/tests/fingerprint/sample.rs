//! A module that uses most of what Rust extraction looks at.
use std::collections::HashMap;
use crate::store::{self, Store};

pub const LIMIT: usize = 10;

/// A linter.
#[derive(Debug)]
pub struct Linter<'a> {
    store: &'a Store,
    cache: HashMap<String, u32>,
}

pub enum Outcome {
    Clean,
    Dirty(u32),
}

pub trait Check {
    fn check(&mut self, files: &[String]) -> Outcome;
    fn name(&self) -> &str {
        "check"
    }
}

impl<'a> Linter<'a> {
    pub fn new(store: &'a Store) -> Self {
        Self { store, cache: HashMap::new() }
    }

    fn count(&self, f: &str) -> u32 {
        self.cache.get(f).copied().unwrap_or(0)
    }
}

impl Check for Linter<'_> {
    fn check(&mut self, files: &[String]) -> Outcome {
        let n: u32 = files.iter().map(|f| self.count(f)).sum();
        if n == 0 { Outcome::Clean } else { Outcome::Dirty(n) }
    }
}

fn open_linter(s: &Store) -> Result<Linter<'_>, String> {
    Ok(Linter::new(s))
}

pub fn run(s: &Store, files: Vec<String>) -> Result<(), String> {
    let mut linter = open_linter(s)?;
    let other: Linter = Linter::new(s);
    linter.check(&files);
    other.count("x");
    let st = store::open("db")?;
    st.flush();
    macro_rules! twice { ($e:expr) => { $e; $e }; }
    twice!(linter.check(&files));
    Ok(())
}

mod tests {
    use super::*;
    #[test]
    fn it_runs() { run(&Store::default(), vec![]).unwrap(); }
}
