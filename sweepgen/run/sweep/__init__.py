"""A sweep as the commands see it: `run` started (start: grid or search), a grid run (grid), and `status` /
`cancel` (status, watch). The CLI calls these; they call the rooms below."""
