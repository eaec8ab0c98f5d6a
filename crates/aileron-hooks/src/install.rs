//! Writing and removing each agent's hook configuration.
