mod escape;
mod parsers;
mod runners;
mod support;
