package netconf

// SetHook makes d call hook between the steps of a write ("edited", "confirmed", "committed");
// drop cuts the session's connection from the client's side.
func SetHook(d *Driver, hook func(step string, drop func())) { d.hook = hook }
