mod edit;
mod index;
mod llm;
mod mcp;
mod registry;
mod retrieval;
mod sandbox;
mod search;
