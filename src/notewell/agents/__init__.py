"""The agent toolkit around the store: conversation memory, context packing, the project
assistant and its chat model and note tools, and the working-context notebook (with its
benchmark). It calls the store through :class:`~notewell.services.contract.NoteStore`."""
