mod edit;
mod index;
mod llm;
mod mcp;
mod retrieval;
mod sandbox;
mod search;
