package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/persistence"
)

// resealDatabase seals again, for their owner, the secrets that an earlier release kept in version 1 (bound to
// nothing): every connection's, source's and target's (connect.Sealer.Upgrade). It runs at start under the
// migration lock, before the runtime is reconciled; a resource whose values are all version 2 is not written.
// Idempotent: a start that stopped halfway is finished by the next.
func resealDatabase(ctx context.Context, db *persistence.DB, sealer *connect.Sealer, log *slog.Logger) error {
	upgrade := domain.Resealer(sealer.Upgrade)
	accounts := persistence.NewAccountRepository(db)
	connections := persistence.NewConnectionRepository(db)
	sources := persistence.NewSourceRepository(db)
	targets := persistence.NewTargetRepository(db)
	buses := persistence.NewBusRepository(db)
	n := 0

	for page := (domain.Page{Limit: domain.MaxPageLimit}); ; {
		as, next, err := accounts.List(ctx, page)
		if err != nil {
			return err
		}
		for _, acc := range as {
			for cpage := (domain.Page{Limit: domain.MaxPageLimit}); ; {
				cs, cnext, err := connections.List(ctx, acc.ID(), cpage)
				if err != nil {
					return err
				}
				for _, c := range cs {
					if changed, err := c.Reseal(upgrade); err != nil || !changed {
						if err != nil {
							return err
						}
						continue
					}
					if _, err := connections.Update(ctx, acc.ID(), c.Name(), func(c *connection.Connection) error {
						_, err := c.Reseal(upgrade)
						return err
					}); err != nil {
						return fmt.Errorf("sealing again the secrets of connection %s: %w", c.ID(), err)
					}
					n++
				}
				if cnext == "" {
					break
				}
				cpage.Token = cnext
			}
		}
		if next == "" {
			break
		}
		page.Token = next
	}

	all, err := buses.ListAll(ctx)
	if err != nil {
		return err
	}
	for _, b := range all {
		ss, err := sources.ListByBus(ctx, b.ID())
		if err != nil {
			return err
		}
		for _, s := range ss {
			if changed, err := s.Reseal(upgrade); err != nil || !changed {
				if err != nil {
					return err
				}
				continue
			}
			if _, err := sources.Update(ctx, b.ID(), s.Name(), func(s *source.Source) error {
				_, err := s.Reseal(upgrade)
				return err
			}); err != nil {
				return fmt.Errorf("sealing again the secrets of source %s: %w", s.ID(), err)
			}
			n++
		}
		ts, err := targets.ListByBus(ctx, b.ID())
		if err != nil {
			return err
		}
		for _, t := range ts {
			if changed, err := t.Reseal(upgrade); err != nil || !changed {
				if err != nil {
					return err
				}
				continue
			}
			if _, err := targets.Update(ctx, t.RuleID(), t.Name(), func(t *target.Target) error {
				_, err := t.Reseal(upgrade)
				return err
			}); err != nil {
				return fmt.Errorf("sealing again the secrets of target %s: %w", t.ID(), err)
			}
			n++
		}
	}
	if n > 0 {
		log.Info("sealed again for their owner the secrets an earlier release kept unbound (version 1)", "resources", n)
	}
	return nil
}
