-- Argo CD resource actions of a BenchmarkCampaign: "run-now" starts one
-- iteration by setting a new spec.runNow token. Disabled while the
-- campaign is suspended (the iteration would wait for the resume).
local actions = {}
actions["run-now"] = {["disabled"] = obj.spec ~= nil and obj.spec.suspend == true}
return actions
