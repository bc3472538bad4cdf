//! Fuzzes the `native` importer: read, then measure, replay and reconcile what it read.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxbudget_fuzz::importer("native", data));
