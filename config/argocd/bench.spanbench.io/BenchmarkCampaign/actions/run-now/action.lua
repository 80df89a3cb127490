-- Start one iteration of the campaign now: each new spec.runNow value
-- starts one. The token is the current UTC time, so two clicks a second
-- apart start two iterations and the value says when it was asked for.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.runNow = "argocd-" .. os.date("!%Y%m%dT%H%M%SZ")
return obj
