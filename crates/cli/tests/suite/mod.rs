mod edit;
mod index;
mod llm;
mod mcp;
mod sandbox;
