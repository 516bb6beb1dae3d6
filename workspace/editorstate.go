package workspace

// EditorState is what the user is looking at in the editor, as the editor said it: the active
// file, the selection in it and the open tabs. It is data from the client: the session checks
// and caps it before the model reads it.
type EditorState struct {
	ActiveFile string
	Selection  *Selection
	OpenFiles  []string
	// MoreOpenFiles counts open files the answer listed beyond those kept in OpenFiles.
	MoreOpenFiles int
}

// Selection is a range of lines the user selected; lines are 1-based, Text may be empty.
type Selection struct {
	Path               string
	StartLine, EndLine int
	Text               string
}
