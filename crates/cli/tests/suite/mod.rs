mod index;
mod llm;
