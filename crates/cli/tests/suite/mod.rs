mod sandbox;
