package tools

// Default returns a registry with every tool agentd offers, in the order the model sees them.
// Adding a tool is its file, its test, one line here and its entry (the description of the tool and
// of each argument) in prompts/builtin/tools.yml.
func Default() *Registry {
	return NewRegistry(
		ReadFile,
		ListDir,
		SearchText,
		SemanticSearch,
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
		ProgramOutput,
		ProgramStop,
		AddDependency,
		EditModuleConfig,
		UpdatePlan,
		SkillTool,
		AgentTool,
		WebFetch,
		WebSearch,
	)
}
