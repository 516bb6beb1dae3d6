" Highlighting of the agentd chat transcript (see :help agentd-chat).
if exists("b:current_syntax")
  finish
endif

" Replies are Markdown: highlight them as such, then the chat's own lines.
runtime! syntax/markdown.vim
unlet! b:current_syntax

syn match agentdHeader      /\%1l.*/
syn match agentdPrompt      /^> .*/
syn match agentdThinking    /^▸ Thinking.*/
syn match agentdThought     /^  │ .*/
syn match agentdToolPending /^  \[\%(pending\|running\)\] .*/
syn match agentdToolDone    /^  \[done\] .*/
syn match agentdToolFailed  /^  \[failed\] .*/
syn match agentdPermission  /^  ? permission: .*/
syn match agentdDiffAdd     /^    +.*/
syn match agentdDiffDelete  /^    -.*/
syn match agentdDiffHunk    /^    @@.*/
syn match agentdPlan        /^Plan:$/
syn match agentdPlanDone    /^  \[x\] .*/
syn match agentdError       /^! error: .*/
syn match agentdWarning     /^! warning: .*/
syn match agentdInfo        /^! info: .*/
syn match agentdStop        /^(turn ended: .*)$/
syn match agentdQueued      /^Queued:$/
syn match agentdStatus      /^── .*/
syn match agentdOutput      /^    │ .*/
syn match agentdChanges     /^Changed \d\+ files\=.*/

hi def link agentdHeader      Title
hi def link agentdPrompt      Statement
hi def link agentdThinking    Comment
hi def link agentdThought     Comment
hi def link agentdToolPending Identifier
hi def link agentdToolDone    String
hi def link agentdToolFailed  ErrorMsg
hi def link agentdPermission  Question
hi def link agentdDiffAdd     DiffAdd
hi def link agentdDiffDelete  DiffDelete
hi def link agentdDiffHunk    Special
hi def link agentdPlan        Title
hi def link agentdPlanDone    Comment
hi def link agentdError       ErrorMsg
hi def link agentdWarning     WarningMsg
hi def link agentdInfo        MoreMsg
hi def link agentdStop        WarningMsg
hi def link agentdQueued      Title
hi def link agentdStatus      NonText
hi def link agentdOutput      Comment
hi def link agentdChanges     Title

let b:current_syntax = "agentd"
