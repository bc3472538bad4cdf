//! Fuzz target: see `ctxbudget_fuzz::split`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxbudget_fuzz::split(data));
