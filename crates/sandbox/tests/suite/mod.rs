mod support;
mod escape;
