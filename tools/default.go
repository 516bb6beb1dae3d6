package tools

// Default returns a registry with every tool agentd offers, in the order the model sees them.
// Adding a tool is its file, its description, its test and one line here.
func Default() *Registry {
	return NewRegistry(
		ReadFile,
		ListDir,
		SearchText,
		FindSymbol,
		GetDiagnostics,
		ProjectOverview,
		CreateFile,
		EditFile,
		CreateDir,
		RenamePath,
		MovePath,
		DeletePath,
		RunProgram,
		AddDependency,
		EditModuleConfig,
		UpdatePlan,
	)
}
