package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
)

// Plan limits: a plan is a short checklist the user reads at a glance, not a document.
const (
	maxPlanEntries      = 50
	maxPlanEntryContent = 500
)

// PlanEntry is one step of the agent's plan, in the shape of the plan session update.
type PlanEntry struct {
	Content  string `json:"content" schema:"maxLength=500"`
	Priority string `json:"priority" schema:"enum=high,enum=medium,enum=low"`
	Status   string `json:"status" schema:"enum=pending,enum=in_progress,enum=completed"`
}

// Plan is the Raw of a successful update_plan call: the whole plan, which the engine sends to the
// client as a plan session update (always the full list) and keeps in the session's transcript.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
}

type updatePlanIn struct {
	Entries []PlanEntry `json:"entries" schema:"minItems=1,maxItems=50"`
}

func (in updatePlanIn) title() string {
	for _, e := range in.Entries {
		if e.Status == "in_progress" && strings.TrimSpace(e.Content) != "" {
			return "Plan: " + clip.String(strings.TrimSpace(e.Content), 60, "…")
		}
	}
	return ""
}

// UpdatePlan is the update_plan tool. It changes nothing in the project (effect read, so it never
// asks); its whole effect is the plan the client shows.
var UpdatePlan Tool = &typed[updatePlanIn]{spec: Spec{Name: "update_plan", Effect: EffectRead, Kind: "think", Title: "Update plan"}, run: updatePlan}

func updatePlan(ctx context.Context, env *Env, in updatePlanIn) Result {
	inProgress := -1
	done := 0
	plan := Plan{Entries: make([]PlanEntry, 0, len(in.Entries))}
	for i, e := range in.Entries {
		e.Content = strings.TrimSpace(e.Content)
		if e.Content == "" {
			return Errorf("field entries[%d].content is empty; say in a few words what the step does", i)
		}
		switch e.Status {
		case "in_progress":
			if inProgress >= 0 {
				return Errorf("field entries[%d].status: only one entry may be in_progress, and entries[%d] already is; mark the finished one completed", i, inProgress)
			}
			inProgress = i
		case "completed":
			done++
		}
		plan.Entries = append(plan.Entries, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan updated: %d of %d steps completed", done, len(plan.Entries))
	if inProgress >= 0 {
		fmt.Fprintf(&b, "; in progress: %s", plan.Entries[inProgress].Content)
	} else if done < len(plan.Entries) {
		b.WriteString("; none in progress (mark the step you start in_progress)")
	}
	b.WriteString(".")
	return Result{Output: b.String(), Raw: plan}
}
