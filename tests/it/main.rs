//! The black-box tests, in one binary (one link, not eight): the `turnout` binary spawned as an
//! operator runs it, the library through its public API, real sockets and real files. Data they
//! read lives beside them: `tests/lint/` (a broken rules directory per check) and `tests/data/`.

mod cli;
mod engine;
mod fuzz;
mod layers;
mod lint;
mod models;
mod serve;
mod text;
mod unattended;
