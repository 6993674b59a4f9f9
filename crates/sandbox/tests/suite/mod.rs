mod escape;
mod support;
