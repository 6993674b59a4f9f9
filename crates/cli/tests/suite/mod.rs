mod edit;
mod index;
mod llm;
