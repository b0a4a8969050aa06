package main

func rssSteady(*config) string { return "" }
func startup(*config) string   { return "" }
func fleet(*config) string     { return "" }
