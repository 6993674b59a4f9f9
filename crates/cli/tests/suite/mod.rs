mod edit;
mod index;
mod llm;
mod sandbox;
mod search;
