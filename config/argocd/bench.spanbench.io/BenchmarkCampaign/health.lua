-- Argo CD health of a BenchmarkCampaign, from its kstatus conditions:
-- Stalled or Regressed -> Degraded, Reconciling -> Progressing,
-- Ready -> Healthy (Suspended while spec.suspend holds new iterations).
-- A status that has not caught up with the spec is Progressing.
local hs = {status = "Progressing", message = "Waiting for the campaign controller"}

local function condition(ctype)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == ctype then
      return c
    end
  end
  return nil
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

local function message(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return fallback
end

if obj.status == nil or obj.status.conditions == nil then
  return hs
end

local generation = obj.metadata.generation or 0
local observed = obj.status.observedGeneration or 0
local stalled, regressed = condition("Stalled"), condition("Regressed")
local reconciling, ready = condition("Reconciling"), condition("Ready")

if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = message(stalled, "Stalled")
elseif isTrue(regressed) then
  hs.status = "Degraded"
  hs.message = "Regressed: " .. message(regressed, "the comparison or the trend found a regression")
elseif observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
elseif isTrue(reconciling) then
  hs.status = "Progressing"
  hs.message = message(reconciling, "An iteration is running")
elseif isTrue(ready) then
  if obj.spec ~= nil and obj.spec.suspend == true then
    hs.status = "Suspended"
    hs.message = "Suspended: no new iterations start"
  else
    hs.status = "Healthy"
    hs.message = message(ready, "Ready")
  end
elseif ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = message(ready, "Not ready")
end
return hs
