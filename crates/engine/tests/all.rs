//! The pillars' one integration-test binary: a real `Workspace` on temporary
//! projects (index, edit engine, checks), grouped by pillar in `suite/`.

mod suite;
