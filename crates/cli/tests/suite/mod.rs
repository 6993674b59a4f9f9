mod edit;
mod index;
mod llm;
mod retrieval;
mod sandbox;
mod search;
