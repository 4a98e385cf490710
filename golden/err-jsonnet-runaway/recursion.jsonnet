// Counts up forever: the stack limit stops it.
local count(n) = 1 + count(n + 1);
{ total: count(0) }
