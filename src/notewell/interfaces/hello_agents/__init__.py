"""The hello-agents compatibility: the NoteTool and the chapter's ContextBuilder names."""
