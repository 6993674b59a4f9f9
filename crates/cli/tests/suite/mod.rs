mod index;
mod llm;
mod sandbox;
