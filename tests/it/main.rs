//! The black-box tests, in one binary (one link, not eight): the `turnout` binary spawned as an
//! operator runs it, the library through its public API, real sockets and real files. Data they
//! read lives beside them: `tests/lint/` (a broken rules directory per check) and `tests/data/`.

mod browser;
mod calibrate;
mod ci;
mod cli;
mod common;
mod decision_log;
mod deploy;
mod docs;
mod embedded;
mod engine;
mod fuzz;
mod hostile;
mod layers;
mod lint;
mod models;
mod openapi;
mod replay;
mod serve;
mod shadow;
mod text;
mod unattended;
